import type { ServerResponse } from 'node:http';
import { ApiProblem } from './problem';
import { stringifyWithRaw } from './raw-json';

/** One answer of the API: a status, a compact JSON body and its headers. */
export interface ApiResponse {
  status: number;
  body: string;
  contentType: 'application/json' | 'application/problem+json';
  headers: Record<string, string>;
}

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): ApiResponse {
  return { status, body: stringifyWithRaw(value), contentType: 'application/json', headers };
}

export function problemResponse(problem: ApiProblem, instance: string): ApiResponse {
  return {
    status: problem.status,
    body: JSON.stringify(problem.body(instance)),
    contentType: 'application/problem+json',
    headers: problem.headers,
  };
}

/** Writes the answer; a HEAD gets the headers of the GET it stands for and no body. */
export function send(res: ServerResponse, response: ApiResponse, head: boolean): void {
  if (res.headersSent) return;
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', response.contentType);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', Buffer.byteLength(response.body));
  res.end(head ? undefined : response.body);
}
