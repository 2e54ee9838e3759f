<?php

declare(strict_types=1);

namespace Bidbench;

/** The `code` of every error body and its HTTP status (contract/README.md, "Error table"). */
enum ErrorCode: string
{
    case BadRequest = 'bad_request';
    case NotFound = 'not_found';
    case MethodNotAllowed = 'method_not_allowed';
    case Conflict = 'conflict';
    case PayloadTooLarge = 'payload_too_large';
    case UnsupportedMediaType = 'unsupported_media_type';
    case DbUnavailable = 'db_unavailable';
    case InternalError = 'internal_error';

    public function status(): int
    {
        return match ($this) {
            self::BadRequest => 400,
            self::NotFound => 404,
            self::MethodNotAllowed => 405,
            self::Conflict => 409,
            self::PayloadTooLarge => 413,
            self::UnsupportedMediaType => 415,
            self::DbUnavailable => 503,
            self::InternalError => 500,
        };
    }
}
