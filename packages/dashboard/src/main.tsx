// The dashboard: the web UI (Preact) that svc-server serves at the apex. It talks to the server
// over HTTP only; of our packages it reads only the SDK's generated API types.
import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

const root = document.getElementById('app');
if (root) render(<App />, root);
