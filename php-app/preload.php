<?php

declare(strict_types=1);

// OPcache preloading (conf/php.ini.tmpl): FPM's master runs this once at start. Every class of src/ is
// loaded through the autoloader, so it is compiled and linked into shared memory with its
// dependencies, and requests find all classes ready without autoloading or linking them again.
require __DIR__ . '/autoload.php';

$files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator(__DIR__ . '/src', FilesystemIterator::SKIP_DOTS));
foreach ($files as $file) {
    if ($file->getExtension() === 'php') {
        $class = 'Bidbench\\' . str_replace('/', '\\', substr($file->getPathname(), strlen(__DIR__ . '/src/'), -4));
        if (!class_exists($class) && !enum_exists($class)) {
            throw new LogicException("preload: {$file->getPathname()} does not define {$class}");
        }
    }
}
