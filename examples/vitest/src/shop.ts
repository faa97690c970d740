/** A tiny in-memory shop: what the example's tests exercise. */

export interface Product {
  name: string;
  price: number;
}

export const CATALOGUE: Product[] = [
  { name: 'Teapot', price: 24 },
  { name: 'Teacup', price: 6 },
  { name: 'Coffee grinder', price: 39 },
];

const USERS: Record<string, { password: string; name: string }> = { demo: { password: 'demo', name: 'Dana Demo' } };

export class Session {
  user: string | undefined;

  logIn(name: string, password: string): boolean {
    if (USERS[name]?.password !== password) return false;
    this.user = name;
    return true;
  }

  logOut(): void {
    this.user = undefined;
  }

  get displayName(): string | undefined {
    return this.user ? USERS[this.user]?.name : undefined;
  }
}

export function search(query: string): Product[] {
  const q = query.trim().toLowerCase();
  return CATALOGUE.filter((p) => p.name.toLowerCase().includes(q));
}

export interface Order {
  number: number;
  total: number;
}

/** The demo shop's known bug: saved cards are declined (DEMO-5 fails on purpose). */
export function placeOrder(cart: Product[], payment: { savedCard?: string }): Order {
  if (payment.savedCard) throw new Error(`card •••• ${payment.savedCard} declined: saved cards are not supported`);
  return { number: 1000 + cart.length, total: cart.reduce((sum, p) => sum + p.price, 0) };
}

let calls = 0;
/** A product list behind a slow network: the first call times out (DEMO-7 is flaky on purpose). */
export async function loadProducts(): Promise<Product[]> {
  calls += 1;
  if (calls === 1) throw new Error('network timeout after 100 ms');
  return CATALOGUE;
}
