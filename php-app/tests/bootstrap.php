<?php

declare(strict_types=1);

// The app's own autoloader, plus Bidbench\Tests\ for the tests' helpers.
require __DIR__ . '/../autoload.php';

spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'Bidbench\\Tests\\')) {
        $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, 15)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

// Warnings are failures here as in the app.
set_error_handler(static function (int $severity, string $message, string $file, int $line): bool {
    throw new ErrorException($message, 0, $severity, $file, $line);
});
