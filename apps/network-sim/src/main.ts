import { PLATFORMS } from '@sps/core';
import { simOAuthEnv } from './oauth/sim-oauth-env.js';
import { startNetworkSim } from './server.js';

const port = Number(process.env.SIM_PORT ?? 4010);
const running = await startNetworkSim(port);
console.log(`network simulator on ${running.url}; point the API and publisher at it with:`);
for (const p of PLATFORMS) console.log(`  NETWORK_${p.toUpperCase()}_BASE_URL=${running.baseUrls[p]}`);
console.log('and connect accounts through its authorization pages (POST /v1/accounts/connect) with:');
for (const [name, value] of Object.entries(simOAuthEnv(running.url))) console.log(`  ${name}=${value}`);
const stop = () => void running.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
