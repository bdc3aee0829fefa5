/**
 * The account page's lists, one page at a time: each list (sessions, passkeys, apps) has its own page number in the
 * query (`?sessions=2`), so paging one leaves the others where they were. The lists are read up to a bound first,
 * so a store answering thousands never makes a page of megabytes.
 */

/** Entries per page of each list. */
export const ACCOUNT_PAGE_SIZE = 20;

/** The most entries a list reads (10 pages). */
export const ACCOUNT_LIST_BOUND = 200;

/** The query parameter of each list's page number. */
export type PagedList = 'sessions' | 'passkeys' | 'apps';

/** Where one list is: the page shown and how many there are. */
export interface ListPage {
  page: number;
  pages: number;
}

/**
 * The page a query asks for, clamped to the pages there are.
 *
 * @example
 * const { page, pages } = listPage(request.query.get('sessions'), sessions.length);
 */
export function listPage(requested: string | null, total: number): ListPage {
  const pages = Math.max(1, Math.ceil(Math.min(total, ACCOUNT_LIST_BOUND) / ACCOUNT_PAGE_SIZE));
  const asked = /^\d{1,4}$/.test(requested ?? '') ? Number(requested) : 1;
  return { page: Math.min(pages, Math.max(1, asked)), pages };
}

/**
 * The entries of one page.
 *
 * @example
 * const shown = pageSlice(sessions, { page: 2, pages: 3 });
 */
export function pageSlice<T>(list: readonly T[], at: ListPage): T[] {
  return list.slice((at.page - 1) * ACCOUNT_PAGE_SIZE, at.page * ACCOUNT_PAGE_SIZE);
}
