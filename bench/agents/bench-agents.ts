// The agents bench/agents/run.ts measures, one per kind of turn, with the message that drives
// each and the answer that proves the turn did what it should.

/** One measured kind of turn: its agents (deployed in order), the one chatted with, its message and the expected answer. */
export interface TurnScenario {
  name: string;
  entry: string;
  agents: { name: string; source: string }[];
  message: string;
  expect: string;
}

const GREETER = `AGENT: greeter
MODEL: builtin
FLOW: hello
  TRIGGER: pattern /hello|hi/i
  RESPOND: "Hello from greeter!"
FALLBACK: "I only say hello."
`;

// Both slots are in the triggering message, so every turn starts and completes the GATHER.
const ORDERS = `AGENT: orders
FLOW: order
  TRIGGER: pattern /order/i
  GATHER:
    count: number PROMPT "How many?" VALIDATE /\\d+/
    size: enum[small, large] PROMPT "Small or large?"
  RESPOND: "Ordered {{count}} {{size}}."
`;

function quoter(apiBase: string): string {
  return `AGENT: quoter
TOOLS:
  quote:
    PARAMS: { symbol: string }
    HTTP: GET ${apiBase}/quote/{{params.symbol}}
    HEADERS: { Authorization: "Bearer {{secrets.api_key}}" }
    TIMEOUT: 5s
FLOW: quote
  TRIGGER: pattern /quote/i
  CALL: quote("ACME") AS q
  IF: q_error
    RESPOND: "Quote failed: {{q_error}}"
  IF: NOT q_error
    RESPOND: "{{q.body.symbol}} at {{q.body.price}}"
`;
}

const PRICER = `AGENT: pricer
TOOLS:
  price:
    PARAMS: { quantity: number, unit: number }
    CODE: |
      export default async ({ quantity, unit }) => ({ total: quantity * unit })
FLOW: price
  TRIGGER: pattern /price/i
  CALL: price(3, 4.5) AS p
  IF: p_error
    RESPOND: "Pricing failed: {{p_error}}"
  IF: NOT p_error
    RESPOND: "Total {{p.total}}"
`;

const CHECKS = ['check_1', 'check_2', 'check_3', 'check_4'];
const FANOUT = `AGENT: fanout
FLOW: screen
  TRIGGER: pattern /screen/i
  DELEGATE: [${CHECKS.join(', ')}] TASK "{{message}}" AS r
  IF: r_error
    RESPOND: "Checks failed: {{r_error}}"
  IF: NOT r_error
    RESPOND: "${CHECKS.map((c) => `{{r.${c}}}`).join(' ')}"
`;
const check = (name: string): string => `AGENT: ${name}
FLOW: check
  TRIGGER: pattern /./
  RESPOND: "${name} ok"
`;

/** The scenarios, greeter (the baseline) first; `apiBase` is the bench's local fake API. */
export function scenarios(apiBase: string): TurnScenario[] {
  return [
    { name: 'greeter (baseline)', entry: 'greeter', agents: [{ name: 'greeter', source: GREETER }], message: 'hi there', expect: 'Hello from greeter!' },
    { name: 'GATHER completed (2 slots)', entry: 'orders', agents: [{ name: 'orders', source: ORDERS }], message: 'order 3 large please', expect: 'Ordered 3 large.' },
    { name: 'HTTP tool (local API)', entry: 'quoter', agents: [{ name: 'quoter', source: quoter(apiBase) }], message: 'quote please', expect: 'ACME at 12.5' },
    { name: 'CODE tool (sandbox)', entry: 'pricer', agents: [{ name: 'pricer', source: PRICER }], message: 'price please', expect: 'Total 13.5' },
    {
      name: 'DELEGATE fan-out x4',
      entry: 'fanout',
      agents: [...CHECKS.map((name) => ({ name, source: check(name) })), { name: 'fanout', source: FANOUT }],
      message: 'screen Ada',
      expect: CHECKS.map((c) => `${c} ok`).join(' '),
    },
  ];
}

/** The tool secret the HTTP tool scenario's header uses. */
export const QUOTE_SECRET = { toolName: 'quote', secretKey: 'api_key', value: 'bench-quote-api-key-0123456789' };
