/**
 * Child process of test/key-generation-lock.test.ts: `node generate-keys-under-gc.cjs <built package> <count>`
 * generates `count` ES256 keys through the package as a CommonJS consumer loads it, allocating a random amount
 * between keys so that garbage collections fall at varied points, often during a key's export. Prints how many
 * keys it made; a generation that deadlocks never prints, and the test's timeout says so.
 */
const { generatePrivateJWK } = require(process.argv[2]);

const count = Number(process.argv[3]);
let garbage = [];
let made = 0;
for (let i = 0; i < count; i++) {
  if (typeof generatePrivateJWK('ES256').d === 'string') made++;
  for (let j = Math.random() * 2000; j > 0; j--) garbage.push({ j });
  if (garbage.length > 50_000) garbage = [];
}
process.stdout.write(`${made} of ${count}\n`);
