// `ringbook agent approve | revoke | list`: agent keys (docs/api.md, "Agent keys") on the SDK.
// The user's --key approves or revokes; the agent then trades with `--key <agent key> --for
// <user address>` (ringbook order / cancel / cancel-after) or the SDK's `Agent`.
import { RingbookClient } from '../client/index.js';
import { EXIT_OK, int, type ParsedArgs, runCommand, str, table, url, URL_FLAG_USAGE, UsageError, wallet } from './common.js';
import { isAddress } from '../util/address.js';

/** Default validity of an approval: 30 days (the longest the engine allows is 180). */
const VALID_FOR_MS_DEFAULT = 30 * 24 * 3600 * 1000;

export const AGENT_USAGE = `usage: ringbook agent approve <agent address> [--name <name>] [--valid-for-ms <ms> | --valid-until-ms <ms>] [options]
       ringbook agent revoke <agent address> [options]
       ringbook agent list [<address>] [options]

An agent key signs orders, cancels, amends, cancel-all, cancel-after and batches for the user
(never withdrawals, referrals, agent changes or forced inclusions); at most 10 live per user.
Trade with it: ringbook order --key <agent key> --for <user address> ...

options:
  --key <private_key>        the user's key (default: RINGBOOK_KEY); list: its address by default
  --name <name>              1 to 16 of [A-Za-z0-9_.-] (default: agent)
  --valid-for-ms <ms>        approval lifetime from now (default 30 days; at most 180 days)
  --valid-until-ms <ms>      or an absolute expiry, epoch ms
${URL_FLAG_USAGE}
  --json                     machine-readable output
  --help                     this text

exit codes: 0 ok, 1 error or engine rejection, 64 usage error`;

function agentArg(args: ParsedArgs): string {
  const a = args.positional[2];
  if (a === undefined || !isAddress(a)) throw new UsageError('<agent address> is required: 0x + 40 hex');
  return a;
}

export async function agentCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, AGENT_USAGE, async () => {
    const sub = args.positional[1];
    const json = args.flags.has('json');
    if (sub === 'approve') {
      const agent = agentArg(args);
      const name = str(args, 'name') ?? 'agent';
      const valid_until_ms = args.flags.has('valid-until-ms')
        ? int(args, 'valid-until-ms', 0, 1)
        : Date.now() + int(args, 'valid-for-ms', VALID_FOR_MS_DEFAULT, 1);
      const r = await new RingbookClient({ base_url: url(args), wallet: wallet(args) }).approveAgent(agent, name, valid_until_ms);
      console.log(json ? JSON.stringify(r) : `agent ${r.agent} (${r.name}) approved for ${r.user} until ${r.valid_until} (batch ${r.batch_id})`);
      return EXIT_OK;
    }
    if (sub === 'revoke') {
      const r = await new RingbookClient({ base_url: url(args), wallet: wallet(args) }).revokeAgent(agentArg(args));
      console.log(json ? JSON.stringify(r) : `agent ${r.agent} revoked for ${r.user} (batch ${r.batch_id})`);
      return EXIT_OK;
    }
    if (sub === 'list') {
      const address = args.positional[2] ?? wallet(args).address;
      if (!isAddress(address)) throw new UsageError('<address>: 0x + 40 hex');
      const r = await new RingbookClient({ base_url: url(args) }).agents(address);
      if (json) console.log(JSON.stringify(r));
      else if (r.agents.length === 0) console.log(`no live agents of ${r.address}`);
      else console.log(table(['agent', 'name', 'valid until', 'nonce'], r.agents.map((x) => [x.agent, x.name, x.valid_until, String(x.nonce_high_water)])));
      return EXIT_OK;
    }
    throw new UsageError('agent approve | revoke | list');
  });
}
