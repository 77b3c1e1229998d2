import { httpsUrl } from "../github/job-names.ts";

/** The stored URL when it is https (checked again here, whatever the store holds), else the one built from ids. */
export const safeLink = (stored: string | null | undefined, built: string): string => httpsUrl(stored) ?? built;
