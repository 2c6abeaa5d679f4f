import { z } from 'zod';
import { validationError } from './app-error.js';
import { isValidTimeZone, type TQueueSettings } from './queue-slots.js';
import { zodIssues } from './zod-issues.js';

const hour = (field: string) =>
  z
    .int({ error: `${field} must be an integer from 0 to 23` })
    .min(0, { error: 'must be an hour from 0 to 23' })
    .max(23, { error: 'must be an hour from 0 to 23' });

/** QueueSettings; every field optional on PUT (omitted ones keep their current value). */
export const ZQueueSettingsInput = z.object(
  {
    enabled: z.boolean({ error: 'must be a boolean' }).optional(),
    intervalHours: z
      .int({ error: 'must be an integer from 1 to 24' })
      .min(1, { error: 'must be from 1 to 24 hours' })
      .max(24, { error: 'must be from 1 to 24 hours' })
      .optional(),
    startHour: hour('startHour').optional(),
    endHour: hour('endHour').optional(),
    timezone: z
      .string({ error: 'must be an IANA time zone name such as Europe/Berlin' })
      .refine(isValidTimeZone, { error: 'must be an IANA time zone name such as Europe/Berlin' })
      .optional(),
  },
  { error: 'the body must be a JSON object' },
);

/** QueueSettings as GET and PUT /api/queue-settings answer it (every field present). */
export const ZQueueSettingsView = z.object({
  enabled: z.boolean(),
  intervalHours: z.int().min(1).max(24),
  startHour: z.int().min(0).max(23),
  endHour: z.int().min(0).max(23),
  timezone: z.string().meta({ description: 'IANA time zone name, e.g. Europe/Berlin.' }),
});
export function parseQueueSettings(body: unknown, current: TQueueSettings): TQueueSettings {
  const parsed = ZQueueSettingsInput.safeParse(body);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  const input = parsed.data;
  return {
    enabled: input.enabled ?? current.enabled,
    intervalHours: input.intervalHours ?? current.intervalHours,
    startHour: input.startHour ?? current.startHour,
    endHour: input.endHour ?? current.endHour,
    timezone: input.timezone ?? current.timezone,
  };
}
parseQueueSettings satisfies (body: unknown, current: TQueueSettings) => z.output<typeof ZQueueSettingsView>;
