<?php

declare(strict_types=1);

namespace Bidbench;

/** An environment variable has a value the contract does not allow. The start-up script refuses to start. */
final class ConfigError extends \RuntimeException
{
}
