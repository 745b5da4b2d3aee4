import { crashStages } from './crash-stages.js';

crashStages('sqlite');
