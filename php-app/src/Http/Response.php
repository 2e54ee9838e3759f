<?php

declare(strict_types=1);

namespace Bidbench\Http;

use Bidbench\Json;
use Bidbench\ServerTiming;

/** A JSON response: status, compact body, extra headers. */
final readonly class Response
{
    /** @param array<string, string> $headers */
    public function __construct(
        public int $status,
        public string $body,
        public array $headers = [],
    ) {
    }

    /**
     * @param array<mixed> $payload
     * @param array<string, string> $headers
     */
    public static function json(int $status, array $payload, array $headers = []): self
    {
        return new self($status, Json::encode($payload), $headers);
    }

    /**
     * Writes the response through the SAPI. Content-Length is set explicitly: without it nginx would
     * answer in chunks, and the contract wants a Content-Length on every response. Date comes from nginx.
     * Server-Timing is computed last, so that `app` covers everything up to the write.
     */
    public function send(ServerTiming $timing): void
    {
        http_response_code($this->status);
        header('Content-Type: application/json');
        header('Content-Length: ' . strlen($this->body));
        foreach ($this->headers as $name => $value) {
            header($name . ': ' . $value);
        }
        if ($timing->enabled) {
            header('Server-Timing: ' . $timing->header());
        }
        echo $this->body;
    }
}
