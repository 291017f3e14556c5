/** A small element builder: the dashboard has no framework, only the DOM. */
type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | ((event: Event) => void) | undefined | null>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export const statusBadge = (status: string) => h('span', { class: `badge status-${status}`, 'data-status': status }, status);

/** Asks before an operator action; resolves true only when confirmed. */
export function confirmAction(question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-label': 'Confirm' },
      h('p', {}, question),
      h(
        'form',
        { method: 'dialog' },
        h('button', { value: 'cancel', type: 'submit' }, 'Cancel'),
        h('button', { value: 'confirm', type: 'submit', class: 'danger', 'data-action': 'confirm' }, 'Confirm'),
      ),
    );
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'confirm');
      dialog.remove();
    });
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}
