// The questions, behind a small interface: @clack/prompts in a terminal, a
// scripted list in the tests (which count the questions asked).
import { cancel, confirm, isCancel, select, text } from "@clack/prompts";

export interface Prompter {
  text(q: { message: string; initial?: string; placeholder?: string; validate: (v: string) => string | undefined }): Promise<string>;
  select<T extends string>(q: { message: string; options: { value: T; label: string; hint?: string }[]; initial: T }): Promise<T>;
  confirm(q: { message: string; initial: boolean }): Promise<boolean>;
}

export class Cancelled extends Error {
  constructor() {
    super("setup cancelled: nothing more was done; run it again to resume");
  }
}

function answered<T>(value: T | symbol): T {
  if (isCancel(value) || typeof value === "symbol") {
    cancel("Cancelled.");
    throw new Cancelled();
  }
  return value;
}

export const clackPrompter: Prompter = {
  async text(q) {
    return answered<string>(await text({ message: q.message, initialValue: q.initial, placeholder: q.placeholder, validate: (v) => q.validate(v ?? "") }));
  },
  async select(q) {
    const options = q.options.map((o) => (o.hint === undefined ? { value: o.value, label: o.label } : { value: o.value, label: o.label, hint: o.hint }));
    return answered<typeof q.initial>(
      await select({ message: q.message, options: options as Parameters<typeof select<typeof q.initial>>[0]["options"], initialValue: q.initial }),
    );
  },
  async confirm(q) {
    return answered<boolean>(await confirm({ message: q.message, initialValue: q.initial }));
  },
};
