/**
 * Tests for the schema of the `snippets` setting in schema/plugin.json, and for
 * the toolbar item that the schema declares.
 */
import schemaJson from '../../../schema/plugin.json';

const schema: any = schemaJson;

describe('schema of the snippets setting', () => {
  it('declares the item schema of the contract', () => {
    const item = schema.definitions.snippet;
    expect(schema.properties.snippets.items).toEqual({
      $ref: '#/definitions/snippet'
    });
    expect(item.additionalProperties).toBe(false);
    expect(item.required.sort()).toEqual(
      [
        'id',
        'title',
        'description',
        'framework',
        'placement',
        'requiresFresh',
        'code'
      ].sort()
    );
    expect(item.properties.framework.enum).toEqual(['torch', 'tensorflow']);
    expect(item.properties.placement.enum).toEqual(['below', 'top']);
    expect(item.properties.requiresFresh.enum).toEqual([
      'cuda',
      'tensorflow',
      null
    ]);
  });

  it('adds the Memory menu to the notebook toolbar', () => {
    expect(schema['jupyter.lab.toolbars'].Notebook).toEqual([
      { name: 'vram-memory', rank: 50 }
    ]);
  });
});
