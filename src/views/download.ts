/**
 * Save text as a file in the browser: a Blob behind a temporary anchor with
 * `download`, the URL revoked once the click was handled.
 */
export function downloadText(
  fileName: string,
  text: string,
  mimeType: string
): void {
  const blob = new Blob([text], { type: mimeType });
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
    // Revoke later: some browsers start the download asynchronously.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}
