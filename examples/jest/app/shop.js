/**
 * The demo shop the example tests, in memory: accounts, a product search, a cart and a checkout. Like the Playwright
 * example's shop, it declines saved cards (its known bug), so one test fails on purpose.
 */
const USERS = { demo: { password: 'demo', name: 'Dana Demo' } };
const PRODUCTS = [
  { name: 'Teapot', price: 24 },
  { name: 'Teacup', price: 6 },
  { name: 'Coffee grinder', price: 48 },
];

function logIn(user, password) {
  const account = USERS[user];
  if (!account || account.password !== password) throw new Error(`wrong user name or password for ${user}`);
  return { user, name: account.name, page: 'dashboard', loggedIn: true };
}

function logOut(session) {
  return { ...session, page: 'login', loggedIn: false };
}

function search(query) {
  const q = String(query).toLowerCase();
  return PRODUCTS.filter((p) => p.name.toLowerCase().includes(q));
}

/** The product list over a slow network: answers after `delayMs`. */
function listProducts(query, delayMs) {
  return new Promise((resolve) => setTimeout(() => resolve(search(query)), delayMs));
}

function checkout(cart, payment) {
  const total = cart.reduce((sum, p) => sum + p.price, 0);
  // The known bug: saved cards are declined.
  if (payment.savedCard) return { ok: false, total, message: 'Payment declined: saved card could not be charged' };
  return { ok: true, total, orderNumber: 1000 + cart.length };
}

module.exports = { checkout, listProducts, logIn, logOut, search };
