/** The per-ask choices offered before an ask: which model (from `lspAgent.models`) and, without a file, which folder. */

/** One entry of the model quick pick. */
export interface ModelItem {
  label: string;
  description?: string;
}

/** The models to offer (the default first, marked); none when there is nothing to choose between. */
export function modelItems(status: { model?: string | null; models?: string[] }): ModelItem[] {
  const models = [...(status.models ?? [])];
  const fallback = status.model ?? undefined;
  if (fallback && !models.includes(fallback)) {
    models.unshift(fallback);
  }
  if (models.length < 2) {
    return [];
  }
  return models.map((label) => (label === fallback ? { label, description: "default (lspAgent.model)" } : { label }));
}

/** The model to send with an ask: undefined for the default (the server then uses `lspAgent.model`). */
export function chosenModel(picked: string | undefined, status: { model?: string | null }): string | undefined {
  return picked && picked !== status.model ? picked : undefined;
}
