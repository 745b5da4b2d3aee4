type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The SSE line that ends an OpenAI-style stream; the openai SDK swallows it, so it is watched for here. */
const DONE_LINE = /^data:\s?\[DONE\]/;

/**
 * Which streamed responses ended with `data: [DONE]`. The openai SDK ends its iteration the same way whether
 * the server sent the marker or the body just stopped (a proxy closing the connection between two chunks), so
 * a stream that never said it was complete could pass for a whole answer. Wraps `fetch`: the body of each
 * `text/event-stream` response is read through a scanner that notes the marker, keyed by the response.
 */
export class StreamEnds {
  readonly #done = new WeakSet<Response>();
  readonly #streams = new WeakSet<Response>();
  readonly #inner: Fetch;

  constructor(inner: Fetch) {
    this.#inner = inner;
  }

  readonly fetch: Fetch = async (input, init) => {
    const response = await this.#inner(input, init);
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || !response.body || !type.includes('text/event-stream')) return response;
    const decoder = new TextDecoder();
    let line = '';
    const scanned = new Response(
      response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform: (bytes, controller) => {
            const lines = (line + decoder.decode(bytes, { stream: true })).split(/\r\n|\r|\n/);
            line = lines.pop() ?? '';
            if (lines.some((each) => DONE_LINE.test(each))) this.#done.add(scanned);
            controller.enqueue(bytes);
          },
          flush: () => {
            if (DONE_LINE.test(line + decoder.decode())) this.#done.add(scanned);
          },
        }),
      ),
      { status: response.status, statusText: response.statusText, headers: response.headers },
    );
    this.#streams.add(scanned);
    return scanned;
  };

  /**
   * Whether `response` (as the SDK hands it back) cannot have been cut off before its end marker: its stream
   * said `data: [DONE]`, or it was no event stream at all (a body the SDK cannot read, not a broken one).
   */
  sawEnd(response: Response): boolean {
    return this.#done.has(response) || !this.#streams.has(response);
  }
}
