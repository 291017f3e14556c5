import { Module } from '@nestjs/common';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { CostsController } from './costs.controller';

/** The cost report of the admin API; the ledger repository comes from LedgerModule. */
@Module({ controllers: [CostsController], providers: [AdminTokenGuard] })
export class CostsModule {}
