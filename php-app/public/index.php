<?php

declare(strict_types=1);

// The front controller: nginx sends every request here (conf/nginx.conf.tmpl), whatever its path.
$startNanos = hrtime(true);

// Warnings and notices are bugs here: make them exceptions, so App answers 500 and logs them, and
// nothing ever leaks into a response body (display_errors is off as well).
set_error_handler(static function (int $severity, string $message, string $file, int $line): bool {
    throw new ErrorException($message, 0, $severity, $file, $line);
});

require __DIR__ . '/../autoload.php';

Bidbench\App::serve($_SERVER, $startNanos);
