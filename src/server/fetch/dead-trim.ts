// The rule lives in job/ (the admin API files into `dead` too); kept here for the fetchers' imports.
export { deadTrimArgs } from '../../job/dead-trim';
