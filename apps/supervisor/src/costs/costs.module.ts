import { Module } from '@nestjs/common';
import { DATABASE } from '@switchyard/platform';
import { AdminJobRepository, type DatabaseHandle } from '@switchyard/state';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { CostsController } from './costs.controller';

/** The cost report of the admin API; the ledger repository comes from LedgerModule. */
@Module({
  controllers: [CostsController],
  providers: [AdminTokenGuard, { provide: AdminJobRepository, inject: [DATABASE], useFactory: (db: DatabaseHandle) => new AdminJobRepository(db.db) }],
  exports: [AdminJobRepository],
})
export class CostsModule {}
