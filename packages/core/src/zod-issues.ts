import type { z } from 'zod';
import { type AppError, type TFieldIssue, validationError } from './app-error.js';

/** Turns zod issues into field-named issues; paths are joined with dots (`segments.2.content`). */
export function zodIssues(error: z.ZodError, rename?: (field: string) => string): TFieldIssue[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const field = path === '' ? 'body' : (rename?.(path) ?? path);
    return { field, message: issue.message };
  });
}

export function parseOrThrow<T extends z.ZodType>(schema: T, input: unknown, fix?: string): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw zodValidationError(result.error, fix);
  return result.data;
}

export function zodValidationError(error: z.ZodError, fix?: string): AppError {
  return validationError(zodIssues(error), fix);
}
