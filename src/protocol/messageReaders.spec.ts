/**
 * The message readers load with the first kernel: until they are there a
 * model drops a message with a note (it never reads one by half), and the
 * first such message starts loading them.
 */
import { makeSample, wire } from '../testing/fixtures';

describe('messageReaders', () => {
  it('drops a message that comes before the readers, notes it, and loads them', async () => {
    await jest.isolateModulesAsync(async () => {
      const fresh = await import('./messageReaders');
      const { KernelMemoryModel: Model } =
        await import('../model/KernelMemoryModel');
      expect(fresh.messageReaders()).toBeNull();
      const model = new Model({ historyCapacity: 10 });
      const result = model.ingest(wire(makeSample()));
      expect(result.kind).toBe('malformed');
      expect(model.latest).toBeNull();
      expect(model.ignoredMessageCount).toBe(1);
      const readers = await fresh.loadMessageReaders();
      expect(fresh.messageReaders()).toBe(readers);
      expect(model.ingest(wire(makeSample())).kind).toBe('message');
    });
  });

  it('tells a hello by its type alone', () => {
    const { claimsHello } =
      jest.requireActual<typeof import('./messageReaders')>('./messageReaders');
    expect(claimsHello({ type: 'hello' })).toBe(true);
    expect(claimsHello({ type: 'sample' })).toBe(false);
    expect(claimsHello(null)).toBe(false);
  });
});
