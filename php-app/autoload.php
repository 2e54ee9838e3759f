<?php

declare(strict_types=1);

// A ten-line PSR-4 autoloader instead of Composer: Packagist is not reachable from every benchmark
// machine, and the app has no dependencies to resolve. Bidbench\Foo\Bar lives in src/Foo/Bar.php.
// Under OPcache preloading (conf/php.ini.tmpl) every class is already linked and this never runs.
spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'Bidbench\\')) {
        $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 9)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
