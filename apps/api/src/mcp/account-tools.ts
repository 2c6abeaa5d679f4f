import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  AppError,
  parseCreatePresetB,
  parseQueueSettings,
  presentAccountB,
  presentPresetB,
  ZCreatePresetB,
  ZQueueSettingsInput,
} from '@sps/core';
import type { TSettingsRepository } from '@sps/db';
import type { TAuth } from '../http/auth.js';
import type { TAccountService } from '../services/account-service.js';
import type { TPostService } from '../services/post-service.js';
import { queueSchedule } from '../services/queue-schedule.js';
import { asJson, run } from './tool-result.js';

export interface TAccountToolDeps {
  auth: TAuth;
  accounts: TAccountService;
  settings: TSettingsRepository;
  posts: TPostService;
}

export function registerAccountTools(server: McpServer, deps: TAccountToolDeps): void {
  const { accountId } = deps.auth;

  server.registerTool(
    'list_accounts',
    {
      title: 'List connected accounts',
      description:
        'The social accounts connected to this account, with is_active, needs_reauth, permissions (the scopes the network granted; null when unknown) and reconnect_to_grant (scopes a publish, delete or read-back may need that the account lacks: connect it again to grant them).',
    },
    () => run(async () => ({ accounts: (await deps.accounts.listForB(accountId)).map(presentAccountB) })),
  );

  server.registerTool(
    'get_queue_settings',
    {
      title: 'Get queue settings',
      description:
        'The interval queue: a slot every intervalHours from startHour to endHour in timezone; one queued post per slot.',
    },
    () => run(() => deps.accounts.getQueueSettings(accountId)),
  );

  server.registerTool(
    'update_queue_settings',
    {
      title: 'Update queue settings',
      description:
        'Changes the interval queue; omitted fields keep their value. intervalHours 1 to 24, startHour and endHour 0 to 23, timezone an IANA name. Re-plans the next slot.',
      inputSchema: ZQueueSettingsInput.shape,
    },
    (args) =>
      run(async () => {
        const current = await deps.accounts.getQueueSettings(accountId);
        return deps.accounts.putQueueSettings(accountId, parseQueueSettings(asJson(args), current));
      }),
  );

  server.registerTool(
    'list_presets',
    { title: 'List presets', description: 'Named, reusable sets of platforms and post defaults.' },
    () => run(async () => ({ presets: (await deps.settings.listPresets(accountId)).map(presentPresetB) })),
  );

  server.registerTool(
    'create_preset',
    {
      title: 'Create a preset',
      description:
        'A named set of platforms and defaults (content, media, segments) to reuse when creating posts. Names are unique per account.',
      inputSchema: ZCreatePresetB.shape,
    },
    (args) =>
      run(async () => {
        const input = parseCreatePresetB(asJson(args));
        const preset = await deps.settings.createPreset(accountId, input);
        if (!preset) {
          throw new AppError('conflict', `A preset named "${input.name}" already exists`, {
            issues: [{ field: 'name', message: 'is already used by another preset of this account' }],
            fix: 'Choose another name.',
          });
        }
        return presentPresetB(preset);
      }),
  );

  server.registerResource(
    'queue-schedule',
    'queue://schedule',
    {
      title: 'Queue schedule',
      description:
        'The interval queue settings, the slot each queued post is expected to publish in (oldest first), and the next free slots a newly queued post would take.',
      mimeType: 'application/json',
    },
    async (uri) => {
      const body = await queueSchedule(deps, accountId);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(body) }] };
    },
  );
}
