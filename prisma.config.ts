import { defineConfig } from 'prisma/config';

// Prisma 7 reads the connection from here; the CLI commands that need it (migrate) are only used
// on machines with internet. This project's own runner is `npm run db:migrate`.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  // Migrations connect directly (DIRECT_DATABASE_URL) when the processes go through PgBouncer.
  datasource: {
    url:
      process.env.DIRECT_DATABASE_URL ||
      process.env.DATABASE_URL ||
      'postgresql://postgres@127.0.0.1:5432/social_posts',
  },
});
