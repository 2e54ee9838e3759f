<?php

declare(strict_types=1);

namespace Bidbench\Tests\Unit;

use Bidbench\Endpoint;
use Bidbench\Http\Request;
use Bidbench\Router;
use PHPUnit\Framework\TestCase;

final class RouterTest extends TestCase
{
    /** @return iterable<string, array{string, ?list<string>, ?string}> */
    public static function paths(): iterable
    {
        yield 'health' => ['/health', ['GET'], null];
        yield 'ready' => ['/ready', ['GET'], null];
        yield 'regions' => ['/regions', ['GET'], null];
        yield 'categories' => ['/categories', ['GET'], null];
        yield 'category items' => ['/categories/5/items', ['GET'], '5'];
        yield 'items' => ['/items', ['POST'], null];
        yield 'item' => ['/items/abc', ['GET', 'PUT', 'DELETE'], 'abc'];
        yield 'item bids' => ['/items/1/bids', ['GET', 'POST'], '1'];
        yield 'users' => ['/users', ['POST'], null];
        yield 'user' => ['/users/9', ['GET'], '9'];
        yield 'percent stays raw' => ['/items/%31', ['GET', 'PUT', 'DELETE'], '%31'];
        yield 'trailing slash' => ['/items/', null, null];
        yield 'trailing slash on list' => ['/regions/', null, null];
        yield 'double slash' => ['//items', null, null];
        yield 'empty id segment' => ['/items//bids', null, null];
        yield 'encoded slash is not a separator' => ['/items/1%2Fbids', ['GET', 'PUT', 'DELETE'], '1%2Fbids'];
        yield 'dot segment not normalized' => ['/items/../regions', null, null];
        yield 'case matters' => ['/Items', null, null];
        yield 'root' => ['/', null, null];
        yield 'empty' => ['', null, null];
        yield 'too long' => ['/items/1/bids/2', null, null];
        yield 'unknown' => ['/nope', null, null];
    }

    /**
     * @dataProvider paths
     * @param list<string>|null $allowed
     */
    public function testMatch(string $path, ?array $allowed, ?string $rawId): void
    {
        $match = Router::match($path);
        if ($allowed === null) {
            self::assertNull($match);
            return;
        }
        self::assertNotNull($match);
        self::assertSame($allowed, $match->allowed());
        self::assertSame($rawId, $match->rawId);
    }

    public function testEndpoints(): void
    {
        self::assertSame(Endpoint::PlaceBid, Router::match('/items/1/bids')?->methods['POST']);
        self::assertSame(Endpoint::DeleteItem, Router::match('/items/1')?->methods['DELETE']);
        self::assertTrue(Endpoint::ListItemBids->isPaged());
        self::assertFalse(Endpoint::GetItem->isPaged());
    }

    public function testRequestSplitsTheRawTarget(): void
    {
        $request = Request::fromServer([
            'REQUEST_METHOD' => 'GET',
            'REQUEST_URI' => '/items/1/bids?limit=%31&x=?y',
            'QUERY_STRING' => 'ignored',
            'CONTENT_TYPE' => '',
        ]);
        self::assertSame('/items/1/bids', $request->path);
        self::assertSame('limit=%31&x=?y', $request->query);
        self::assertNull($request->contentType);
        self::assertNull($request->contentLength);
        self::assertSame('/x', Router::rawPath('/x?'));
    }
}
