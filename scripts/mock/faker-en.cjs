// Faker with its English locale only, in the shape of the package's main entry ({ default,
// faker }): Prism's generator needs one locale, and the main entry loads all of them (seconds
// and about 40 MiB). prism.ts points Prism's `require('@faker-js/faker')` here.
const faker = require('@faker-js/faker/locale/en');
module.exports = { default: faker, faker };
