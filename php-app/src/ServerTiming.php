<?php

declare(strict_types=1);

namespace Bidbench;

/**
 * The per-layer monitor of docs/design.md §2.4: `Server-Timing: db;dur=<ms>, app;dur=<ms>`.
 *
 * `db` sums the wall time of every database call of the request, connecting included (PHP's "pool
 * checkout" is taking the persistent connection); `app` runs from the first line of public/index.php
 * to the moment the response is written. With SERVER_TIMING=0 nothing is measured at all (no hrtime()
 * calls), so the monitor's own overhead can be measured (STEP Table 2).
 */
final class ServerTiming
{
    private int $dbNanos = 0;

    public function __construct(
        public readonly bool $enabled,
        private readonly int $startNanos,
    ) {
    }

    public function addDb(int $nanos): void
    {
        $this->dbNanos += $nanos;
    }

    public function header(): string
    {
        return sprintf(
            'db;dur=%.3F, app;dur=%.3F',
            $this->dbNanos / 1e6,
            (hrtime(true) - $this->startNanos) / 1e6,
        );
    }

    public function elapsedMillis(): float
    {
        return (hrtime(true) - $this->startNanos) / 1e6;
    }
}
