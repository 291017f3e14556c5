import './style.css';
import { AdminApi, ApiFailure } from './api';
import { h, replaceChildren } from './dom';
import { costsView, jobView, jobsView, queuesView, targetsView, type View } from './views';

/** How often the open view reloads its data. */
const REFRESH_MS = 2_000;
const TOKEN_KEY = 'switchyard.admin-token';

const root = document.getElementById('app')!;
let api: AdminApi | null = null;
let refreshTimer: number | undefined;
let renderSeq = 0;

function route(hash: string): { view: View; tab: string } {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(search);
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'jobs' && parts[1]) return { view: jobView(parts[1]), tab: 'jobs' };
  if (parts[0] === 'targets') return { view: targetsView(() => void show(), showError), tab: 'targets' };
  if (parts[0] === 'queues') return { view: queuesView(), tab: 'queues' };
  if (parts[0] === 'costs') return { view: costsView(Number(params.get('hours') ?? '24') || 24, navigate), tab: 'costs' };
  return { view: jobsView(params, navigate), tab: 'jobs' };
}

function navigate(hash: string): void {
  if (location.hash === hash) void show();
  else location.hash = hash;
}

function showError(message: string): void {
  const banner = document.getElementById('error');
  if (banner) replaceChildren(banner, message);
}

function signOut(message?: string): void {
  sessionStorage.removeItem(TOKEN_KEY);
  api = null;
  window.clearTimeout(refreshTimer);
  renderLogin(message);
}

/** Renders the current view; a refused token drops every piece of data and returns to the login form. */
async function show(): Promise<void> {
  if (!api) return;
  window.clearTimeout(refreshTimer);
  const seq = ++renderSeq;
  const { view, tab } = route(location.hash);
  for (const link of document.querySelectorAll<HTMLAnchorElement>('nav a')) link.classList.toggle('active', link.dataset.tab === tab);
  const main = document.getElementById('view')!;
  try {
    const content = await view.render(api);
    if (seq !== renderSeq) return;
    // Leave an open confirmation alone: re-rendering under it would drop the operator's target row.
    if (!document.querySelector('dialog[open]')) replaceChildren(main, content);
    showError('');
  } catch (error) {
    if (seq !== renderSeq) return;
    if (error instanceof ApiFailure && error.refused) {
      signOut(`The admin token was refused (${error.status} ${error.code}): ${error.message}`);
      return;
    }
    showError(error instanceof Error ? error.message : String(error));
  }
  refreshTimer = window.setTimeout(() => void show(), REFRESH_MS);
}

function renderShell(): void {
  const tabs: Array<[string, string]> = [
    ['jobs', 'Jobs'],
    ['targets', 'Targets'],
    ['queues', 'Queues'],
    ['costs', 'Costs'],
  ];
  replaceChildren(
    root,
    h(
      'header',
      { class: 'top' },
      h('h1', {}, 'Switchyard'),
      h('nav', {}, tabs.map(([tab, label]) => h('a', { href: `#/${tab}`, 'data-tab': tab }, label))),
      h('span', { class: 'live' }, `live · every ${REFRESH_MS / 1000} s`),
      h('button', { type: 'button', onclick: () => signOut() }, 'Sign out'),
    ),
    h('div', { id: 'error', role: 'alert', class: 'error-banner' }),
    h('main', { id: 'view' }, h('p', { class: 'muted' }, 'Loading…')),
  );
}

function renderLogin(message?: string): void {
  const form = h(
    'form',
    { class: 'login', 'aria-label': 'Sign in' },
    h('h1', {}, 'Switchyard operator dashboard'),
    h('label', {}, 'Admin token ', h('input', { name: 'token', type: 'password', autocomplete: 'current-password', required: true })),
    h('button', { type: 'submit' }, 'Sign in'),
    h('p', { id: 'error', role: 'alert', class: 'error-banner' }, message ?? ''),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const token = String(new FormData(form).get('token') ?? '').trim();
    void signIn(token);
  });
  replaceChildren(root, form);
}

/** The token is checked against the API before any view is drawn, so a wrong one never shows data. */
async function signIn(token: string): Promise<void> {
  const candidate = new AdminApi(token);
  try {
    await candidate.get('/admin/queues');
  } catch (error) {
    const message =
      error instanceof ApiFailure && error.refused
        ? `The admin token was refused (${error.status} ${error.code}): ${error.message}`
        : `Could not sign in: ${error instanceof Error ? error.message : String(error)}`;
    signOut(message);
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  api = candidate;
  renderShell();
  await show();
}

window.addEventListener('hashchange', () => void show());
const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) void signIn(saved);
else renderLogin();
