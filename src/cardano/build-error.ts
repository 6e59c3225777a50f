/** The Cardano builder's refusal: an INVALID_INPUT error saying what is wrong with the transaction asked for. */
import { CharmsError } from '../errors.js';

export const refuse = (m: string) => new CharmsError('INVALID_INPUT', `cannot build the Cardano transaction: ${m}`);
