import { faultCampaign } from './campaign.js';
import { vitest } from './runners.js';

/** The fault campaign (campaign.ts) through the real Vitest: a file of its own, so the runners' campaigns run side by side. */
faultCampaign(vitest);
