import { faultCampaign } from './campaign.js';
import { playwright } from './runners.js';

/** The fault campaign (campaign.ts) through the real Playwright: a file of its own, so the runners' campaigns run side by side. */
faultCampaign(playwright);
