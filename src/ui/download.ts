/**
 * Saves data as a file in the browser, through a Blob behind a temporary
 * anchor with `download`. The URL is revoked once the click was handled.
 */
export function downloadText(
  fileName: string,
  text: string,
  mimeType: string
): void {
  downloadBlob(fileName, new Blob([text], { type: mimeType }));
}

/**
 * Saves bytes given as base64, such as a kernel's binary result like a pickle.
 */
export function downloadBase64(
  fileName: string,
  base64: string,
  mimeType: string
): void {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  downloadBlob(fileName, new Blob([bytes], { type: mimeType }));
}

function downloadBlob(fileName: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = fileName;
  anchor.style.display = 'none';
  document.body.appendChild(anchor);
  try {
    anchor.click();
  } finally {
    anchor.remove();
    // The URL is revoked later because some browsers start the download
    // asynchronously.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}
