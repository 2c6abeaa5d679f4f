import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built to static files that the API serves at /dashboard (same origin as its JSON API: no CORS, and the
// session cookie is SameSite=Strict).
export default defineConfig({
  base: '/dashboard/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
});
