<?php

declare(strict_types=1);

namespace Bidbench;

/** A known path: its methods (in `Allow` order) and the raw, not yet validated `{id}` segment. */
final readonly class RouteMatch
{
    /** @param array<string, Endpoint> $methods */
    public function __construct(
        public array $methods,
        public ?string $rawId,
    ) {
    }

    /** @return list<string> */
    public function allowed(): array
    {
        return array_keys($this->methods);
    }
}
