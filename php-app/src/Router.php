<?php

declare(strict_types=1);

namespace Bidbench;

/**
 * Routes on the raw path (the part of REQUEST_URI before `?`): no percent-decoding, no normalization,
 * so a trailing slash, a doubled slash or an empty segment is an unknown route (contract/README.md).
 * `{id}` matches any one non-empty segment; its value is validated later, after the method check.
 */
final class Router
{
    private const ID = null;

    /** Segments (null = `{id}`) and methods in the contract's `Allow` order. */
    private const ROUTES = [
        [['health'], ['GET' => Endpoint::Health]],
        [['ready'], ['GET' => Endpoint::Ready]],
        [['regions'], ['GET' => Endpoint::ListRegions]],
        [['categories'], ['GET' => Endpoint::ListCategories]],
        [['categories', self::ID, 'items'], ['GET' => Endpoint::ListCategoryItems]],
        [['items'], ['POST' => Endpoint::CreateItem]],
        [['items', self::ID], ['GET' => Endpoint::GetItem, 'PUT' => Endpoint::UpdateItem, 'DELETE' => Endpoint::DeleteItem]],
        [['items', self::ID, 'bids'], ['GET' => Endpoint::ListItemBids, 'POST' => Endpoint::PlaceBid]],
        [['users'], ['POST' => Endpoint::CreateUser]],
        [['users', self::ID], ['GET' => Endpoint::GetUser]],
    ];

    /** The raw path of a raw request target: everything before the first `?`. */
    public static function rawPath(string $requestUri): string
    {
        $query = strpos($requestUri, '?');
        return $query === false ? $requestUri : substr($requestUri, 0, $query);
    }

    public static function match(string $path): ?RouteMatch
    {
        if (!str_starts_with($path, '/')) {
            return null;
        }
        $segments = explode('/', substr($path, 1));
        $count = count($segments);
        foreach (self::ROUTES as [$pattern, $methods]) {
            if (count($pattern) !== $count) {
                continue;
            }
            $id = null;
            foreach ($pattern as $i => $literal) {
                if ($literal === self::ID) {
                    if ($segments[$i] === '') {
                        continue 2;
                    }
                    $id = $segments[$i];
                } elseif ($literal !== $segments[$i]) {
                    continue 2;
                }
            }
            return new RouteMatch($methods, $id);
        }
        return null;
    }
}
