import module from 'node:module';

// The admin CLI's entry. A CLI compiles its modules again on every start; Node 22.1+ can keep the compiled
// code between calls (in the OS temp directory), which is most of a simple command's time after the process
// start. Older Nodes do without. Everything else is loaded after this, by cli.ts.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./cli.js');
