// The svc-server commands besides `start`: accounts and plans, sign-in links, `cluster status`,
// and the first start's welcome. main.ts runs them; they work on the store directly.
// May use: hostname, store, auth, certs, cluster, oidc.
export { runAccountCommand, type CliIo } from './account-command.js';
export { runClusterCommand } from './cluster-command.js';
export { runOidcCommand } from './oidc-command.js';
export { printWelcome, type WelcomeServer } from './welcome.js';
