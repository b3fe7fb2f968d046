/**
 * The few values of the protocol that code outside the message readers
 * needs (the comm's target and version, the hidden holder kinds), apart
 * from messages.ts so that importing them does not bring the readers along:
 * those load with the first kernel (messageReaders.ts).
 */
import type { HiddenHolderKind } from './protocol.generated';

/** The comm target name that the helper registers in the kernel. */
export const COMM_TARGET = 'jupyterlab-vram';

/**
 * The protocol version, raised on any incompatible change of the messages
 * below.
 */
export const PROTOCOL_VERSION = 1;

/** Every hidden holder kind, in the order the panel lists them. */
export const HIDDEN_HOLDER_KINDS: readonly HiddenHolderKind[] = [
  'output_cache',
  'last_traceback',
  'last_execution_result'
];

/** Whether a string from the kernel names a hidden holder kind this frontend knows. */
export function isHiddenHolderKind(value: string): value is HiddenHolderKind {
  return (HIDDEN_HOLDER_KINDS as readonly string[]).includes(value);
}
