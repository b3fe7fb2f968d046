/**
 * Tests for the default snippets, which are generated from schema/plugin.json
 * (the same list that the Python tests run). They check the contract of each
 * snippet and the PyTorch versions that the snippets run on.
 */
import { DEFAULT_SNIPPETS } from './defaultSnippets';
import { renderSnippet } from './snippet';
import { unknownPlaceholders } from './placeholders';
import { readSnippetSettings } from './snippetSettings';
import { CONTRACT_IDS } from '../../testing/snippetsFixtures';

// This matches the else branch of `if hasattr(torch.amp, "GradScaler"): ...
// else: x = torch.cuda.amp.GradScaler(...)`, which runs only where torch.amp has
// no GradScaler.
const GRADSCALER_FALLBACK =
  /(?<=^if hasattr\(torch\.amp, "GradScaler"\):\n(?: {4}.*\n)+)else:.*\n {4}\S+ = torch\.cuda\.amp\.GradScaler\(enabled=[^\n]*/gm;

describe('default snippets', () => {
  it('has every id of the contract, valid and unique', () => {
    expect(DEFAULT_SNIPPETS.map(s => s.id)).toEqual(CONTRACT_IDS);
    const read = readSnippetSettings(
      { snippets: DEFAULT_SNIPPETS },
      DEFAULT_SNIPPETS
    );
    expect(read.problems).toEqual([]);
    expect(read.visible).toHaveLength(CONTRACT_IDS.length);
  });

  it('uses modern APIs only (an older one only as the fallback where torch lacks the modern one)', () => {
    for (const s of DEFAULT_SNIPPETS) {
      // The one exception is torch.cuda.amp.GradScaler in the else branch of a
      // check that torch.amp has no GradScaler (PyTorch before 2.3), so that
      // branch is removed before the check.
      const code = s.code.join('\n').replace(GRADSCALER_FALLBACK, '');
      expect(code).not.toContain('torch.cuda.amp');
      const autocasts = code.match(/torch\.amp\.autocast\([^)]*\)/g) ?? [];
      for (const call of autocasts) {
        expect(call).toContain('device_type=');
      }
      for (const call of code.match(/GradScaler\([^)]*\)/g) ?? []) {
        expect(call).toMatch(/GradScaler\(device/);
      }
      expect(code).not.toMatch(/use_reentrant=True/);
      expect(unknownPlaceholders(s.code)).toEqual([]);
    }
  });

  it('names its own loss tensor so that no placeholder name can be rebound (a criterion called `loss`)', () => {
    for (const s of DEFAULT_SNIPPETS) {
      for (const line of s.code) {
        expect([s.id, line]).not.toEqual([
          s.id,
          expect.stringMatching(/^\s*loss\s*=/)
        ]);
      }
    }
  });

  it('chooses the device in code wherever torch runs', () => {
    for (const s of DEFAULT_SNIPPETS) {
      const code = s.code.join('\n');
      if (/\.to\(device/.test(code)) {
        expect(code).toContain(
          'device = "cuda" if torch.cuda.is_available() else "cpu"'
        );
      }
    }
  });

  it('says what the contract asks per snippet', () => {
    const byId = new Map(DEFAULT_SNIPPETS.map(s => [s.id, s]));
    const code = (id: string) => byId.get(id)!.code.join('\n');
    expect(code('amp')).toContain('torch.amp.autocast(device_type=device');
    expect(code('amp')).toContain(
      'torch.amp.GradScaler(device, enabled=(device == "cuda"))'
    );
    expect(code('bf16-autocast')).toContain('dtype=torch.bfloat16');
    expect(code('bf16-autocast')).not.toContain('GradScaler(');
    expect(code('grad-checkpointing')).toContain('use_reentrant=False');
    expect(code('allocator-config')).toContain(
      'alloc_variables = ["PYTORCH_CUDA_ALLOC_CONF"]'
    );
    expect(code('allocator-config')).toContain('os.environ[variable] = ');
    expect(code('allocator-config')).toContain('"expandable_segments:True"');
    expect(code('allocator-config').indexOf('os.environ')).toBeLessThan(
      code('allocator-config').indexOf('import torch')
    );
    expect(code('memory-fraction')).toMatch(
      /if torch\.cuda\.is_available\(\):\n\s+torch\.cuda\.set_per_process_memory_fraction/
    );
    expect(code('memory-summary')).toContain('torch.cuda.is_initialized()');
    expect(code('profiler-memory')).toContain('profile_memory=True');
    expect(code('profiler-memory')).toContain('"self_cpu_memory_usage"');
    expect(code('batch-size-search')).toContain('OutOfMemoryError');
    expect(code('batch-size-search')).toContain('gc.collect()');
    expect(code('batch-size-search')).toContain('torch.cuda.empty_cache()');
    expect(code('batch-size-search')).toMatch(/\bdel /);
    expect(code('dataloader-pinning')).toContain(
      'pin_memory=torch.cuda.is_available()'
    );
    expect(code('dataloader-pinning')).toContain('num_workers=');
    expect(code('loss-item')).toContain('running_loss += batch_loss.item()');
    expect(code('grad-checkpointing')).toContain('checkpoint_sequential(');
    expect(code('bf16-autocast')).toContain(
      'is_bf16_supported(including_emulation=False)'
    );
    expect(code('batch-size-search')).toContain('named_buffers()');
    expect(code('dataloader-pinning')).toContain('batch_sampler');
    expect(code('no-grad-eval')).toContain(
      'for inputs, targets in {{eval_dataloader}}:'
    );
    expect(code('tf-memory-growth')).toContain(
      'tf.config.experimental.set_memory_growth(gpu, True)'
    );
    expect(code('tf-memory-growth')).toContain('except RuntimeError:');
    expect(code('tf-memory-growth')).toContain(
      'TensorFlow is already initialised: restart the kernel and run this cell first'
    );
    expect(code('tf-memory-growth')).toContain('TF_FORCE_GPU_ALLOW_GROWTH');
    expect(code('tf-clear-session')).toContain(
      'tf.keras.backend.clear_session()'
    );
    expect(code('tf-memory-limit')).toContain('memory_limit=');
  });

  describe('run on the PyTorch versions users have, not only the newest', () => {
    const byId = new Map(DEFAULT_SNIPPETS.map(s => [s.id, s]));
    const code = (id: string) => byId.get(id)!.code.join('\n');

    it('sets expandable_segments only for PyTorch 2.1 and later, read without importing torch', () => {
      // The version check matters because older allocators reject the option,
      // and every CUDA allocation would then fail after the restart.
      const cell = code('allocator-config');
      expect(cell).toContain('importlib.metadata.version("torch")');
      const check = cell.indexOf('>= (2, 1):');
      expect(check).toBeGreaterThan(
        cell.indexOf('importlib.metadata.version("torch")')
      );
      // The cell imports torch only once, and only after it has set the variable.
      expect(cell.indexOf('import torch')).toBeGreaterThan(
        cell.indexOf('os.environ[variable] = ')
      );
      expect(cell.indexOf('import torch')).toBe(
        cell.lastIndexOf('import torch')
      );
      // The option is set once, inside the check; the else branch says why it is
      // not set and what to do instead.
      expect(cell.match(/expandable_segments:True/g)).toHaveLength(1);
      expect(cell.indexOf('expandable_segments:True')).toBeGreaterThan(check);
      const otherwise = cell.slice(cell.indexOf('\nelse:'));
      expect(otherwise).toMatch(/print\(f?"PyTorch \{torch_version\}/);
      expect(otherwise).toContain('max_split_size_mb');
      expect(otherwise).not.toContain('os.environ[');
    });

    it('falls back to torch.cuda.amp.GradScaler where torch.amp has none (before 2.3)', () => {
      const cell = code('amp');
      expect(cell).toContain('if hasattr(torch.amp, "GradScaler"):');
      expect(cell).toMatch(GRADSCALER_FALLBACK);
      expect(cell.match(GRADSCALER_FALLBACK)![0]).toContain(
        '{{scaler}} = torch.cuda.amp.GradScaler(enabled=(device == "cuda"))'
      );
      // The cell makes the scaler in both branches, so it needs no TODO line.
      expect(
        renderSnippet(byId.get('amp')!, {
          model: ['m'],
          optimizer: ['o'],
          dataloader: ['d'],
          loss: ['l']
        })
      ).not.toContain('TODO');
    });

    it('halves the batch on a host out-of-memory too, and on torch without OutOfMemoryError; re-raises the rest', () => {
      const cell = code('batch-size-search');
      // torch.OutOfMemoryError is new in 2.5 and torch.cuda.OutOfMemoryError in
      // 1.13, so the cell catches what every version raises (RuntimeError and
      // MemoryError) rather than these names.
      expect(cell).not.toMatch(
        /except\s+\(?\s*(torch\.(cuda\.)?)?OutOfMemoryError/
      );
      expect(cell).toContain('except (RuntimeError, MemoryError) as error:');
      expect(cell).toContain('isinstance(error, MemoryError)');
      expect(cell).toContain('"DefaultCPUAllocator" in message');
      expect(cell).toContain('"out of memory" in message');
      expect(cell).toMatch(/if not out_of_memory\(error\):\n\s+raise\b/);
    });

    it('sorts the profile by the memory column this torch has (self_cuda_memory_usage in older ones)', () => {
      const cell = code('profiler-memory');
      expect(cell).toContain('hasattr(events[0], "self_device_memory_usage")');
      expect(cell).toContain('sort_by = "self_cuda_memory_usage"');
      expect(cell).toContain('sort_by = "self_device_memory_usage"');
      expect(cell).toContain('events.table(sort_by=sort_by');
    });
  });

  it('places and flags the before-initialisation snippets', () => {
    const flags = Object.fromEntries(
      DEFAULT_SNIPPETS.map(s => [s.id, [s.placement, s.requiresFresh]])
    );
    expect(flags['allocator-config']).toEqual(['top', 'cuda']);
    expect(flags['tf-memory-growth']).toEqual(['top', 'tensorflow']);
    expect(flags['tf-memory-limit']).toEqual(['top', 'tensorflow']);
    for (const s of DEFAULT_SNIPPETS) {
      if (
        !['allocator-config', 'tf-memory-growth', 'tf-memory-limit'].includes(
          s.id
        )
      ) {
        expect([s.id, s.placement, s.requiresFresh]).toEqual([
          s.id,
          'below',
          null
        ]);
      }
    }
  });
});
