<?php

declare(strict_types=1);

namespace Bidbench;

/**
 * Line-oriented log in the instance's run directory (BIDBENCH_PHP_LOG, set by the harness driver).
 *
 * Each line is one append (O_APPEND), so lines of concurrent FPM children never interleave. The file is
 * opened on the first line of a request, not before: at LOG_LEVEL=info a normal request never touches
 * it. At debug every request writes one line and every SQL statement one more, so the cost of debug
 * logging is real and measurable (STEP Table 7), as in the other apps.
 */
final class Logger
{
    /** @var resource|null */
    private $stream = null;

    public function __construct(
        public readonly LogLevel $level,
        private readonly string $file,
    ) {
    }

    public function debugEnabled(): bool
    {
        return $this->level === LogLevel::Debug;
    }

    public function debug(string $message): void
    {
        if ($this->level === LogLevel::Debug) {
            $this->write('DEBUG', $message);
        }
    }

    public function info(string $message): void
    {
        if ($this->level->value >= LogLevel::Info->value) {
            $this->write('INFO', $message);
        }
    }

    public function warn(string $message): void
    {
        if ($this->level->value >= LogLevel::Warn->value) {
            $this->write('WARN', $message);
        }
    }

    public function error(string $message): void
    {
        $this->write('ERROR', $message);
    }

    /** The start-up line goes out verbatim: the harness looks for a line that starts with "bidbench-start ". */
    public function raw(string $line): void
    {
        $this->append($line . "\n");
    }

    private function write(string $level, string $message): void
    {
        $now = microtime(true);
        $stamp = gmdate('Y-m-d\TH:i:s', (int) $now) . sprintf('.%03dZ', (int) (($now - floor($now)) * 1000));
        // One line per entry, whatever the message holds (SQL errors span lines).
        $this->append($stamp . ' ' . $level . ' php[' . getmypid() . '] ' . str_replace(["\r", "\n"], ' ', $message) . "\n");
    }

    private function append(string $line): void
    {
        if ($this->stream === null) {
            $stream = @fopen($this->file, 'ab');
            if ($stream === false) {
                // Last resort: the FPM log (catch_workers_output), so an error is never lost silently.
                $stream = fopen('php://stderr', 'ab');
            }
            $this->stream = $stream ?: null;
        }
        if ($this->stream !== null) {
            fwrite($this->stream, $line);
        }
    }
}
