// Saving an export where the user chooses (the native save dialog), whole or not at all.
import { backend } from "./backend";

/** Asks where to save `contents`, then saves it there; answers the path, or null when the user
 * cancelled. Throws what the write failed with. */
export async function saveAs(name: string, kind: string, extension: string, contents: string): Promise<string | null> {
  const path = await backend.pickSaveFile(name, kind, extension);
  if (!path) return null;
  await backend.saveText(path, contents);
  return path;
}
