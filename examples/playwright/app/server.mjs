// A tiny shop for the example tests: login, dashboard with a user menu, profile, product search, cart and checkout.
// Node's http module only; state lives in cookies. `PORT` picks the port (default 3210).
import { createServer } from 'node:http';

const USER = { name: 'demo', password: 'demo', fullName: 'Dana Demo' };
const PRODUCTS = [
  { id: 'teapot', name: 'Teapot', price: 24 },
  { id: 'teacup', name: 'Teacup', price: 8 },
  { id: 'kettle', name: 'Kettle', price: 39 },
  { id: 'mug', name: 'Mug', price: 6 },
];

const SIGNED_IN_ONLY = new Set(['/dashboard', '/profile']);

const html = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// The known bug the example's Mobile project finds (DEMO-3): on a phone-sized screen the user menu hides "Log out".
const STYLE = '<style>@media (max-width: 600px) { [role="menu"] a[href="/logout"] { display: none; } }</style>';

function page(title, body) {
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${html(title)} · Demo shop</title>${STYLE}</head>
<body><main>${body}</main></body></html>`;
}

function cookies(req) {
  return Object.fromEntries(
    (req.headers.cookie ?? '')
      .split(';')
      .map((c) => c.trim().split('='))
      .filter(([k]) => k)
      .map(([k, v]) => [k, decodeURIComponent(v ?? '')]),
  );
}

async function form(req) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  return Object.fromEntries(new URLSearchParams(raw));
}

function send(res, status, body, headers = {}) {
  const type = typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json';
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const redirect = (res, to, headers = {}) => send(res, 303, '', { location: to, ...headers });
const search = (q) => PRODUCTS.filter((p) => p.name.toLowerCase().includes(String(q ?? '').toLowerCase()));

const routes = {
  'GET /': (_req, res) => redirect(res, '/login'),
  'GET /api/health': (_req, res) => send(res, 200, { status: 'ok' }),
  'GET /api/products': async (_req, res, url) => {
    const delay = Math.min(Number(url.searchParams.get('delayMs') ?? 0), 10_000);
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    send(res, 200, { products: search(url.searchParams.get('q')) });
  },
  'GET /login': (_req, res) =>
    send(
      res,
      200,
      page(
        'Log in',
        `<h1>Log in</h1><form method="post" action="/login" aria-label="Login form">
<label>User name <input name="user" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Log in</button></form>`,
      ),
    ),
  'POST /login': async (req, res) => {
    const { user, password } = await form(req);
    if (user !== USER.name || password !== USER.password) {
      return send(res, 401, page('Log in', '<h1>Log in</h1><p role="alert">Wrong user name or password</p>'));
    }
    redirect(res, '/dashboard', { 'set-cookie': `session=${USER.name}; Path=/; HttpOnly` });
  },
  'GET /logout': (_req, res) => redirect(res, '/login', { 'set-cookie': 'session=; Path=/; Max-Age=0' }),
  'GET /dashboard': (_req, res) =>
    send(
      res,
      200,
      page(
        'Dashboard',
        `<h1>Dashboard</h1><details><summary>User menu</summary><ul role="menu">
<li><a role="menuitem" href="/profile">Profile</a></li><li><a role="menuitem" href="/logout">Log out</a></li>
</ul></details><p><a href="/shop">Shop</a></p>`,
      ),
    ),
  'GET /profile': (_req, res) =>
    send(res, 200, page('Profile', `<h1>Profile</h1><p data-testid="user-name">${html(USER.fullName)}</p>`)),
  'GET /shop': (_req, res, url) => {
    const q = url.searchParams.get('q');
    const list = q === null ? '' : search(q).map((p) => `<li>${html(p.name)} ${addButton(p)}</li>`);
    send(
      res,
      200,
      page(
        'Shop',
        `<h1>Shop</h1><form action="/shop" role="search">
<input name="q" aria-label="Search products" list="suggestions" value="${html(q ?? '')}">
<datalist id="suggestions">${PRODUCTS.map((p) => `<option value="${html(p.name)}">`).join('')}</datalist>
<button type="submit">Search</button></form><ul aria-label="Results">${q === null ? '' : list.join('')}</ul>`,
      ),
    );
  },
  'POST /cart': async (req, res, _url, jar) => {
    const { product } = await form(req);
    const cart = [...(jar.cart ? jar.cart.split(',') : []), product].filter((id) => PRODUCTS.some((p) => p.id === id));
    redirect(res, '/cart', { 'set-cookie': `cart=${encodeURIComponent(cart.join(','))}; Path=/` });
  },
  'GET /cart': (_req, res, _url, jar) => {
    const items = (jar.cart ? jar.cart.split(',') : []).map((id) => PRODUCTS.find((p) => p.id === id)).filter(Boolean);
    send(
      res,
      200,
      page(
        'Cart',
        `<h1>Cart</h1><p data-testid="cart-count">${items.length} item(s)</p>
<ul>${items.map((p) => `<li>${html(p.name)}</li>`).join('')}</ul><a href="/checkout">Checkout</a>`,
      ),
    );
  },
  'GET /checkout': (_req, res) =>
    send(
      res,
      200,
      page(
        'Checkout',
        `<h1>Checkout</h1><form method="post" action="/order"><fieldset><legend>Payment</legend>
<label><input type="radio" name="card" value="saved" checked> Saved card •••• 4242</label>
<label><input type="radio" name="card" value="new"> New card</label></fieldset>
<button type="submit">Place order</button></form>`,
      ),
    ),
  // The known bug the example's failing test (DEMO-5) finds: orders paid with the saved card are declined.
  'POST /order': async (req, res) => {
    const { card } = await form(req);
    if (card === 'saved') return send(res, 402, page('Order', '<h1>Order</h1><p role="alert">Payment declined</p>'));
    send(res, 200, page('Order', '<h1>Order</h1><p>Order number 1001</p>'));
  },
};

function addButton(p) {
  return `<form method="post" action="/cart" style="display:inline"><input type="hidden" name="product" value="${html(
    p.id,
  )}"><button type="submit">Add ${html(p.name)} to cart</button></form>`;
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const jar = cookies(req);
  const route = routes[`${req.method} ${url.pathname}`];
  try {
    if (!route) return send(res, 404, page('Not found', '<h1>Not found</h1>'));
    if (SIGNED_IN_ONLY.has(url.pathname) && jar.session !== USER.name) return redirect(res, '/login');
    await route(req, res, url, jar);
  } catch (err) {
    send(res, 500, { error: String(err) });
  }
});

const port = Number(process.env.PORT ?? 3210);
server.listen(port, '127.0.0.1', () => {
  console.log(`demo shop listening on http://127.0.0.1:${port}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
