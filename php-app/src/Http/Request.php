<?php

declare(strict_types=1);

namespace Bidbench\Http;

/**
 * The parts of a request the contract looks at, raw, as nginx passes them (conf/nginx.conf.tmpl):
 * REQUEST_URI is nginx's $request_uri (not decoded, not normalized) and QUERY_STRING its raw $args.
 */
final readonly class Request
{
    public function __construct(
        public string $method,
        public string $path,
        public string $query,
        public ?string $contentType,
        public ?string $contentLength,
    ) {
    }

    /** @param array<string, mixed> $server $_SERVER */
    public static function fromServer(array $server): self
    {
        $uri = (string) ($server['REQUEST_URI'] ?? '/');
        $question = strpos($uri, '?');
        return new self(
            method: (string) ($server['REQUEST_METHOD'] ?? 'GET'),
            path: $question === false ? $uri : substr($uri, 0, $question),
            query: $question === false ? '' : substr($uri, $question + 1),
            contentType: isset($server['CONTENT_TYPE']) && $server['CONTENT_TYPE'] !== '' ? (string) $server['CONTENT_TYPE'] : null,
            contentLength: isset($server['CONTENT_LENGTH']) && $server['CONTENT_LENGTH'] !== '' ? (string) $server['CONTENT_LENGTH'] : null,
        );
    }
}
