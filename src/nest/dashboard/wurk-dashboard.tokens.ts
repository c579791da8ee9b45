export const WURK_DASHBOARD_SETTINGS = Symbol('WURK_DASHBOARD_SETTINGS');

export interface DashboardSettings {
  /** Where the page finds the API's `/v1`, relative to the dashboard's own URL or absolute. */
  apiUrl: string;
  /** Show no action buttons, whatever the token may do (the API still decides what it refuses). */
  readOnly: boolean;
}
