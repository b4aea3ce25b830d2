// Exact fixed-point money: decimal strings (fixed.ts) and overflow-checked arithmetic (muldiv.ts).
export {
  UNITS_PER_WHOLE,
  BPS_PER_WHOLE,
  MONEY_OVERFLOW,
  Scale,
  MoneyFormatError,
  parseDecimalUnits,
  formatUnits,
  formatUnitsFixed6,
  isSafeUnits,
} from './fixed.js';
export {
  mulDivFloor,
  mulDivCeil,
  notionalFloor,
  notionalCeil,
  feeCeil,
  feeFloor,
  notionalFloorUnchecked,
  notionalCeilUnchecked,
  feeCeilUnchecked,
  feeFloorUnchecked,
  isMultiple,
  addChecked,
} from './muldiv.js';
