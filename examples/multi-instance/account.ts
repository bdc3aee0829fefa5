/** The one demo account of the multi-instance example, shared by the launcher, the instances and their test. */
export const ACCOUNT_ID = '123456';
