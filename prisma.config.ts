import { defineConfig } from 'prisma/config';

// Prisma 7 reads the connection from here; the CLI commands that need it (migrate) are only used
// on machines with internet. This project's own runner is `npm run db:migrate`.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/social_posts' },
});
