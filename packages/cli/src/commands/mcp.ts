import { defineCommand } from '../command-line.js';
import { loadMcp } from '../optional.js';

export const mcp = defineCommand({
  name: 'mcp',
  summary: [['mcp [--http PORT] [--allow-writes]', 'an MCP server: assistants read the cycles, failures and history']],
  usage: 'Usage: casebridge mcp [--http PORT] [--host H] [--allow-writes]',
  about: `An MCP server on what the reporters wrote into synapseRT, with the same configuration as the reporters
(casebridge.config.json, CASEBRIDGE_*): tools list_cycles, cycle_summary, cycle_gate, list_failures,
failure_detail, compare_cycles, requirement_coverage, case_history, flaky_cases, quarantined_cases; with
--allow-writes also quarantine_case, release_case, link_defect and cycle_action (without it they answer how to
allow them). Standard input and output by default (an assistant
starts it); --http PORT serves Streamable HTTP at /mcp instead, on loopback unless --host says otherwise, which
then needs a bearer token (CASEBRIDGE_MCP_TOKEN). A browser Origin other than the server's own is refused.`,
  options: {
    http: {
      type: 'number',
      value: 'PORT',
      description: ['serve Streamable HTTP on PORT (path /mcp) instead of stdio'],
    },
    host: { type: 'string', value: 'H', description: ['the address to listen on (default 127.0.0.1)'] },
    'allow-writes': { type: 'boolean', description: ['let the write tools change synapseRT'] },
  },
  after: `Examples:
  Claude Code:  claude mcp add casebridge -- npx casebridge mcp
  VS Code (.vscode/mcp.json):  { "servers": { "casebridge": { "command": "npx", "args": ["casebridge", "mcp"] } } }
  Cursor (.cursor/mcp.json):   { "mcpServers": { "casebridge": { "command": "npx", "args": ["casebridge", "mcp"] } } }`,
  positionals: false,
  async run({ values }, io) {
    const { serve } = await loadMcp();
    return serve(
      {
        ...(values.http !== undefined ? { http: values.http } : {}),
        ...(values.host !== undefined ? { host: values.host } : {}),
        allowWrites: values['allow-writes'],
      },
      io,
    );
  },
});
